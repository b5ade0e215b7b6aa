; Reads a word from stdin and prints it reversed; the word "crash" ends
; the program with exit status 3. Plain Linux syscalls, no libc.
	global _start

	section .bss
buf:	resb 4096
out:	resb 4097

	section .text
_start:
	xor r12d, r12d			; bytes read so far
.read:
	mov edx, 4096
	sub rdx, r12
	jz .strip
	xor eax, eax			; read(0, buf + r12, 4096 - r12)
	xor edi, edi
	lea rsi, [buf + r12]
	syscall
	test rax, rax
	jle .strip
	add r12, rax
	jmp .read
.strip:					; drop trailing newlines
	test r12, r12
	jz .check
	cmp byte [buf + r12 - 1], 10
	jne .check
	dec r12
	jmp .strip
.check:
	cmp r12, 5
	jne .reverse
	cmp dword [buf], 'cras'
	jne .reverse
	cmp byte [buf + 4], 'h'
	jne .reverse
	mov eax, 60			; exit(3)
	mov edi, 3
	syscall
.reverse:
	xor ecx, ecx
	mov rsi, r12
.next:
	test rsi, rsi
	jz .write
	dec rsi
	mov al, [buf + rsi]
	mov [out + rcx], al
	inc rcx
	jmp .next
.write:
	mov byte [out + rcx], 10
	inc rcx
	mov eax, 1			; write(1, out, rcx)
	mov edi, 1
	mov rsi, out
	mov rdx, rcx
	syscall
	mov eax, 60			; exit(0)
	xor edi, edi
	syscall
