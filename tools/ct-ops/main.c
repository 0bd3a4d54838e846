#include "ctensor.h"
#include <stdio.h>
int main(void) { printf("ctensor %s\n", ct_version()); return 0; }
