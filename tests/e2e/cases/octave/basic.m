% Reads lines of two integers and prints their sums; the line "crash"
% ends the program with exit status 3.
while true
  line = fgetl(stdin);
  if ~ischar(line)
    break;
  end
  if strcmp(line, "crash")
    exit(3);
  end
  v = sscanf(line, "%d");
  printf("%d\n", sum(v));
end
