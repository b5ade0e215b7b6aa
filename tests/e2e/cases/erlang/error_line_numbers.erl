main(_) ->
    io:format("one~n"),
    io:format("two~n")
    io:format("missing comma above~n").
