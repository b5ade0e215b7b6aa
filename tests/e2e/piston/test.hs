main :: IO ()
main = putStrLn (concat ["O", "K"])
