#!/bin/bash
# bash: a function and an array
say() { local parts=("$@"); printf "%s" "${parts[@]}"; echo; }
say O K
