(println (apply str (map char [79 75])))
