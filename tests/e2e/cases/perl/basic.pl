use strict;
use warnings;

while (my $line = <STDIN>) {
    chomp $line;
    $line =~ s/^\s+|\s+$//g;
    die "crash requested\n" if $line eq "crash";
    print scalar reverse($line), "\n";
}
