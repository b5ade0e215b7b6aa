; Reads pairs of integers and prints their sums; the word crash ends the
; program with exit status 3.
(let loop ((a (read)))
  (unless (eof-object? a)
    (when (eq? a 'crash)
      (exit 3))
    (let ((b (read)))
      (display (+ a b))
      (newline)
      (loop (read)))))
