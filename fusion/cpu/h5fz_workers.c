/* h5fz_workers.c - the host thread pools' shared lifecycle (h5fz_workers.h). */
#include "h5fz_workers.h"

void h5fz_workers_after_fork(h5fz_workers *w)
{
  pthread_mutex_init(&w->call, NULL);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->work, NULL);
  pthread_cond_init(&w->done, NULL);
  w->n_workers = 0;
  w->quit = 0;
}

void h5fz_workers_stop(h5fz_workers *w, unsigned first)
{
  if (pthread_mutex_trylock(&w->call)) return;
  pthread_mutex_lock(&w->lock);
  w->quit = 1;
  pthread_cond_broadcast(&w->work);
  pthread_mutex_unlock(&w->lock);
  for (unsigned k = first; k < first + w->n_workers; k++) pthread_join(w->threads[k], NULL);
  w->n_workers = 0;
  pthread_mutex_unlock(&w->call);
}
