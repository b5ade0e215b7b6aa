--  The request names the file after the unit (hello.adb for Hello); with
--  -gnatwe, a file of another name would be a build error.
with Ada.Text_IO;
with Ada.Long_Long_Integer_Text_IO;

procedure Hello is
   package LIO renames Ada.Long_Long_Integer_Text_IO;
   A, B : Long_Long_Integer;
begin
   LIO.Get (A);
   LIO.Get (B);
   LIO.Put (A + B, Width => 0);
   Ada.Text_IO.New_Line;
end Hello;
