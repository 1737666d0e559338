/* A shared library with a thread-local variable (tls.c). */
__thread int tls_lib = 2;

void set_tls_lib(int value) { tls_lib = value; }
