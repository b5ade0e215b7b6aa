%% an escript: main/1 runs
main(_Args) ->
    io:format("~s~n", [[$O, $K]]).
