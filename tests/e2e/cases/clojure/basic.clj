; Reads a line of two integers and prints their sum; "crash" ends with
; exit status 3.
(require '[clojure.string :as str])

(let [line (str/trim (or (read-line) ""))]
  (if (= line "crash")
    (System/exit 3)
    (let [[a b] (map #(Long/parseLong %) (str/split line #"\s+"))]
      (println (+ a b)))))
