<?php
$word = implode('', ['O', 'K']);
echo $word, "\n";
