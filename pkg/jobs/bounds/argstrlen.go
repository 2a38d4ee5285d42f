package bounds

// MaxArgStrlen is the most bytes one argument or environment string
// ("NAME=value") of a process may take, its terminating NUL included: Linux's
// MAX_ARG_STRLEN, 32 pages of 4 KiB (include/uapi/linux/binfmts.h). execve
// fails with E2BIG ("argument list too long") on a longer one, so a container
// given one cannot start.
const MaxArgStrlen = 131072

// EnvBytes is what the environment string NAME=value of a variable takes
// against MaxArgStrlen: its bytes and the terminating NUL.
func EnvBytes(name string, valueLen int) int { return len(name) + 1 + valueLen + 1 }
