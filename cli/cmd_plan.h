/*
 * cmd_plan.h - `h5fz plan`: print the hardware plan (device, chosen kernel
 * class, refused classes and why, predicted GB/s, route crossover).
 */
#ifndef H5FZ_CMD_PLAN_H
#define H5FZ_CMD_PLAN_H

/* Run `h5fz plan`. argv[0] is "plan"; options:
 *   --help            usage on stdout, returns 0
 *   --json            the plan as one JSON object instead of text
 *   --device FILE     plan for a described device (planner/devices/ holds some)
 *                     instead of detecting GPU --gpu N (default 0)
 *   --gpu N           ordinal of the GPU to detect
 *   --registry FILE   kernel classes from FILE instead of the embedded ones
 *   --ops LIST        the spec's op ids, e.g. 1,10,11,13,30 (the default)
 *   --chunk BYTES     also print the route of one chunk size (K/M/G suffix)
 *   --calibration F   calibration file (default <cache dir>/calibration.txt)
 * Prints the plan on stdout and errors on stderr. Returns 0 on success,
 * 1 when a file cannot be read or planning fails, 2 on a usage error.
 * No GPU is not an error: the plan then chooses the cpu class. */
int h5fz_cmd_plan(int argc, char **argv);

#endif
