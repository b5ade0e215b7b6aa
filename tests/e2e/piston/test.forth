: ok-word ( -- ) ." OK" cr ;
ok-word bye
