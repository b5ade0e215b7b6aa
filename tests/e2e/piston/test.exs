["O", "K"] |> Enum.join() |> IO.puts()
