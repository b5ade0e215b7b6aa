      * Reads a line of two integers and prints their sum; "crash"
      * ends with exit status 3. Fixed source format (cobc's default).
       IDENTIFICATION DIVISION.
       PROGRAM-ID. BASIC.
       DATA DIVISION.
       WORKING-STORAGE SECTION.
       01 WS-LINE      PIC X(80).
       01 WS-PA        PIC X(40).
       01 WS-PB        PIC X(40).
       01 WS-SUM       PIC S9(18).
       01 WS-OUT       PIC -(18)9.
       PROCEDURE DIVISION.
           ACCEPT WS-LINE
           IF WS-LINE = "crash"
               MOVE 3 TO RETURN-CODE
               STOP RUN
           END-IF
           UNSTRING WS-LINE DELIMITED BY ALL SPACE
               INTO WS-PA WS-PB
           END-UNSTRING
           COMPUTE WS-SUM = FUNCTION NUMVAL(WS-PA)
               + FUNCTION NUMVAL(WS-PB)
           MOVE WS-SUM TO WS-OUT
           DISPLAY FUNCTION TRIM(WS-OUT)
           STOP RUN.
