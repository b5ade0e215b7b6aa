main(_) ->
    {ok, [A, B]} = io:fread("", "~d ~d"),
    io:format("~w~n", [A + B]).
