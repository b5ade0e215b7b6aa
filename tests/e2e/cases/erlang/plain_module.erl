-module(solution).
-export([main/1]).

main(_) ->
    {ok, [A, B]} = io:fread("", "~d ~d"),
    io:format("~w~n", [add(A, B)]).

add(A, B) -> A + B.
