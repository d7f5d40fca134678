/*===- c_api_demo.c - run a saved module through the C API ----------------===*\
|*                                                                            *|
|* usage: attnrt-c-demo MODULE.so ENTRY OUT.npy IN0.npy [IN1.npy ...]         *|
|* Writes the first output of ENTRY. Links only attnrt_core.                  *|
\*===----------------------------------------------------------------------===*/

#include "attnrt/attnrt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODULE.so ENTRY OUT.npy [IN.npy ...]\n", argv[0]);
    return 2;
  }
  /* Repeated invocations would reuse their buffers. A speed hint only: it
     fails where the allocator is not glibc's (e.g. under sanitizers). */
  if (attnrt_retain_freed_memory((size_t)1 << 30))
    fprintf(stderr, "note: freed memory not retained: %s\n",
            attnrt_last_error());
  attnrt_module *m = NULL;
  if (attnrt_module_load(argv[1], &m)) {
    fprintf(stderr, "error: %s\n", attnrt_last_error());
    return 1;
  }
  int numIn = argc - 4;
  attnrt_tensor **ins = calloc(numIn ? numIn : 1, sizeof(*ins));
  for (int i = 0; i < numIn; ++i)
    if (attnrt_tensor_load_npy(argv[4 + i], &ins[i])) {
      fprintf(stderr, "error: %s\n", attnrt_last_error());
      return 1;
    }
  int numOut = attnrt_num_outputs(m, argv[2]);
  if (numOut < 1) {
    fprintf(stderr, "error: no entry point '%s' with outputs\n", argv[2]);
    return 1;
  }
  attnrt_tensor **outs = calloc(numOut, sizeof(*outs));
  if (attnrt_invoke(m, argv[2], ins, numIn, outs, numOut) ||
      attnrt_tensor_save_npy(outs[0], argv[3])) {
    fprintf(stderr, "error: %s\n", attnrt_last_error());
    return 1;
  }
  printf("%s: output 0 has rank %lld\n", argv[2],
         (long long)attnrt_tensor_rank(outs[0]));
  for (int i = 0; i < numOut; ++i)
    attnrt_tensor_free(outs[i]);
  for (int i = 0; i < numIn; ++i)
    attnrt_tensor_free(ins[i]);
  free(outs);
  free(ins);
  attnrt_module_free(m);
  return 0;
}
