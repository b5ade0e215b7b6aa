<?php
while (($line = fgets(STDIN)) !== false) {
    $w = trim($line);
    if ($w === "crash") {
        throw new RuntimeException("crash requested");
    }
    echo strrev($w), "\n";
}
