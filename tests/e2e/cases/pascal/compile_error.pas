program Main;
begin
  WriteLn(undefinedName)
end.
