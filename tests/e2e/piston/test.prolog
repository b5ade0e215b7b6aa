% directives are the program: Piston loads the file and runs `true`
:- atom_concat('O', 'K', Word), write(Word), nl.
