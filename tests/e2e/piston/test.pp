program SaysOk;
var
    word: string;
begin
    word := 'O' + 'K';
    writeln(word);
end.
