(format t "~{~a~}~%" '("O" "K"))
