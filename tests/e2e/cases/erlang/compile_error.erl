main(_) ->
    io:format("~w~n", [undefined_variable + 1])
    io:format("missing comma above~n").
