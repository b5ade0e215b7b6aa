use strict;
use warnings;
print join('', 'O', 'K'), "\n";
