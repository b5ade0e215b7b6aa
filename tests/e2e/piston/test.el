(princ (concat "O" "K"))
(terpri)
