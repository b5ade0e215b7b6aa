#lang racket/base
;; Reads a line of two integers and prints their sum; "crash" ends with
;; exit status 3.
(require racket/string)

(define line (string-trim (read-line)))
(if (string=? line "crash")
    (exit 3)
    (let ([nums (map string->number (string-split line))])
      (displayln (+ (car nums) (cadr nums)))))
