#lang racket/base
(displayln (string-append "O" "K"))
