	global _start
	section .text
_start:
	mov eax, ebx, ecx
	movq_not_an_instruction rax
