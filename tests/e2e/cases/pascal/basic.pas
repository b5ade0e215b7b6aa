{ Reads a line of two integers and prints their sum; "crash" ends with
  exit status 3. }
program Main;

uses
  SysUtils;

var
  line: string;
  a, b: Int64;
  p, code: Integer;

begin
  ReadLn(line);
  line := Trim(line);
  if line = 'crash' then
    Halt(3);
  p := Pos(' ', line);
  Val(Copy(line, 1, p - 1), a, code);
  Val(Trim(Copy(line, p + 1, Length(line))), b, code);
  WriteLn(a + b);
end.
