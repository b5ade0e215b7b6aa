# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
IO.stream(:stdio, :line)
|> Enum.each(fn line ->
  case String.trim(line) do
    "crash" ->
      System.halt(3)

    text ->
      text
      |> String.split()
      |> Enum.map(&String.to_integer/1)
      |> Enum.sum()
      |> IO.puts()
  end
end)
