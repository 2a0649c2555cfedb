/* cli_tempfile.c - remove the temporary output file on SIGINT, SIGTERM or
 * SIGHUP (cli_tempfile.h). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli_tempfile.h"

static char guarded[4096];
static volatile sig_atomic_t have_guarded;

static void remove_and_reraise(int sig)
{
  /* unlink, signal and raise are async-signal-safe */
  if (have_guarded) unlink(guarded);
  signal(sig, SIG_DFL);
  raise(sig);
}

int h5fz_cli_temp_guard(const char *path)
{
  have_guarded = 0;
  size_t n = strlen(path);
  if (n >= sizeof guarded) return -1;
  memcpy(guarded, path, n + 1);
  have_guarded = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = remove_and_reraise;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    struct sigaction now;
    if (sigaction(sigs[i], NULL, &now) != 0) return -1;
    /* a signal the process inherited as ignored (nohup, a background job
     * of a script) stays ignored: it does not end the process */
    if (now.sa_handler == SIG_IGN) continue;
    if (sigaction(sigs[i], &sa, NULL) != 0) return -1;
  }
  return 0;
}

void h5fz_cli_temp_release(void) { have_guarded = 0; }
