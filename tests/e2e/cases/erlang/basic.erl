%% Reads lines of two integers and prints their sums; the line "crash"
%% ends the program with exit status 3.
main(_) ->
    loop().

loop() ->
    case io:get_line("") of
        eof ->
            ok;
        Line ->
            case string:trim(Line) of
                "crash" ->
                    halt(3);
                Trimmed ->
                    [A, B] = [list_to_integer(X) || X <- string:lexemes(Trimmed, " ")],
                    io:format("~w~n", [A + B]),
                    loop()
            end
    end.
