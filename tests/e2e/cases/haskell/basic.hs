import System.Exit (exitWith, ExitCode (ExitFailure))
import Data.Char (isSpace)

trim :: String -> String
trim = f . f where f = reverse . dropWhile isSpace

main :: IO ()
main = do
  ws <- fmap (map trim . lines) getContents
  mapM_ step ws
  where
    step "crash" = exitWith (ExitFailure 3)
    step w = putStrLn (reverse w)
