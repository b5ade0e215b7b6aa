;; Reverses each line of stdin; "crash" signals an error.
(let (line)
  (while (setq line (ignore-errors (read-from-minibuffer "")))
    (let ((w (string-trim line)))
      (when (string= w "crash")
        (error "crash requested"))
      (princ (concat (reverse w) "\n")))))
