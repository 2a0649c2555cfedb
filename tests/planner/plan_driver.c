/*
 * plan_driver.c - stand-in for the `h5fz` dispatcher so that `h5fz plan`
 * (cli/cmd_plan.c) can be tested before the real one links it:
 *   h5fz_plan_driver plan [options]
 */
#include <stdio.h>
#include <string.h>

#include "cmd_plan.h"

int main(int argc, char **argv)
{
  if (argc < 2 || strcmp(argv[1], "plan") != 0) {
    fprintf(stderr, "usage: %s plan [options]\n", argv[0]);
    return 2;
  }
  return h5fz_cmd_plan(argc - 1, argv + 1);
}
