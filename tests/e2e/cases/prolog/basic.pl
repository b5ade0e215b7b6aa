% Reads lines of two integers and prints their sums; the line "crash"
% ends the program with exit status 3.
main :-
    read_line_to_string(user_input, Line),
    (   Line == end_of_file
    ->  true
    ;   handle(Line),
        main
    ).

handle("crash") :- !,
    halt(3).
handle(Line) :-
    split_string(Line, " ", " ", [A, B]),
    number_string(X, A),
    number_string(Y, B),
    Sum is X + Y,
    format("~w~n", [Sum]).
