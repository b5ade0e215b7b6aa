--  Reads a line of two integers and prints their sum; "crash" ends with
--  exit status 3.
with Ada.Command_Line;
with Ada.Text_IO;
with Ada.Long_Long_Integer_Text_IO;

procedure Main is
   package LIO renames Ada.Long_Long_Integer_Text_IO;
   Line : constant String := Ada.Text_IO.Get_Line;
   A, B : Long_Long_Integer;
   Last : Natural;
begin
   if Line = "crash" then
      Ada.Command_Line.Set_Exit_Status (3);
      return;
   end if;
   LIO.Get (Line, A, Last);
   LIO.Get (Line (Last + 1 .. Line'Last), B, Last);
   LIO.Put (A + B, Width => 0);
   Ada.Text_IO.New_Line;
end Main;
