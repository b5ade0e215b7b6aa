-- Each line of stdin is a row of input(line): print the sum of the two
-- integers on it. The line "crash" makes abs() overflow, an SQL error
-- that ends the run with exit status 1.
SELECT CASE
         WHEN line = 'crash' THEN abs(-9223372036854775808)
         ELSE CAST(substr(line, 1, instr(line, ' ') - 1) AS INTEGER)
              + CAST(substr(line, instr(line, ' ') + 1) AS INTEGER)
       END
FROM input
ORDER BY rowid;
