/* Prints what the program was started with: working directory, two environment variables,
   its arguments, and where main is (which moves between runs when randomization is on). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char* var(const char* name) {
  const char* value = getenv(name);
  return value != NULL ? value : "-";
}

int main(int argc, char** argv) {
  char cwd[4096];
  printf("CWD[%s] FOO[%s] HOME[%s] MAIN[%p]", getcwd(cwd, sizeof cwd), var("FOO"), var("HOME"), (void*)&main);
  for (int i = 1; i < argc; i++) {
    printf(" ARG[%s]", argv[i]);
  }
  printf("\n");
  return 0;
}
