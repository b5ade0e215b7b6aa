;;; Reads a line of two integers and prints their sum; "crash" ends with
;;; exit status 3.
(let ((line (string-trim '(#\Space #\Tab #\Return) (read-line))))
  (if (string= line "crash")
      (sb-ext:exit :code 3)
      (let* ((space (position #\Space line))
             (a (parse-integer line :end space))
             (b (parse-integer line :start space)))
        (format t "~D~%" (+ a b)))))
