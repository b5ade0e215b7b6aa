# Reverses each line of stdin; "crash" dies.
for lines() -> $line {
    my $w = $line.trim;
    die "crash requested" if $w eq 'crash';
    say $w.flip;
}
