; Prints the two-character string GREETING, a macro the build flags
; define (-DGREETING='hi').
	global _start
	section .data
msg:	db GREETING, 10
	section .text
_start:
	mov eax, 1
	mov edi, 1
	mov rsi, msg
	mov edx, 3
	syscall
	mov eax, 60
	xor edi, edi
	syscall
