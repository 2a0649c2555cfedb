/*
 * h5fz_py_config.c - the executor part of h5fz.get_config(): the planner's
 * view of the GPU (planner/h5fz_planner.h) for the default chain, without
 * compiling a kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_device_query.h"
#include "h5fz_planner.h"
#include "h5fz_py_config.h"
#include "h5fz_settings.h"

/* Append text to buf as a JSON string (quotes, escapes); returns the new
 * length, which may pass cap (then nothing more is written). */
static size_t put_json_string(char *buf, size_t cap, size_t len, const char *text)
{
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "\"");
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\')
      snprintf(esc, sizeof esc, "\\%c", *p);
    else if (*p < 0x20)
      snprintf(esc, sizeof esc, "\\u%04x", *p);
    else
      snprintf(esc, sizeof esc, "%c", *p);
    len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s", esc);
  }
  return len + (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "\"");
}

int h5fzpy_config_json(char *buf, size_t cap)
{
  /* H5FZ_GPU_ORDINAL and H5FZ_DEVICE as the codec reads them (a bad value:
   * the codec's default and its warning) */
  h5fz_settings settings;
  memset(&settings, 0, sizeof settings);
  h5fz_settings_read(&settings, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE);
  h5fz_device_desc dev;
  char why[H5FZ_PLAN_PATH_MAX + H5FZ_PLAN_REASON_MAX];
  (void)h5fz_device_detect(settings.gpu_ordinal, &dev, why, sizeof why); /* no GPU is an answer */
  h5fz_registry *reg = malloc(sizeof *reg);
  char reg_path[H5FZ_SETTINGS_VALUE_MAX];
  h5fz_plan *plan = malloc(sizeof *plan);
  const char *klass = "cpu";
  if (reg && plan &&
      h5fz_registry_load_default(h5fz_settings_value("H5FZ_REGISTRY", reg_path, sizeof reg_path), reg, NULL, 0) ==
          H5FZ_OK) {
    h5fz_spec spec;
    h5fz_spec_default(&spec);
    if (h5fz_plan_make(&dev, reg, spec.ops, spec.n_ops, NULL, plan) == H5FZ_OK) klass = plan->klass;
  }
  const char *setting = settings.device_text[0] ? settings.device_text : "auto";
  int cpu_only = settings.device == H5FZ_SETTING_DEVICE_CPU;
  const char *executor = !dev.present || !strcmp(klass, "cpu") || cpu_only ? "cpu" : "gpu";
  char nvrtc[32] = "";
  if (dev.nvrtc_known) snprintf(nvrtc, sizeof nvrtc, "%d.%d", dev.nvrtc_major, dev.nvrtc_minor);
  size_t len = (size_t)snprintf(buf, cap, "{\"device_setting\": ");
  len = put_json_string(buf, cap, len, setting);
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0,
                          ", \"gpu_present\": %s, \"gpu\": ", dev.present ? "true" : "false");
  len = put_json_string(buf, cap, len, dev.present ? dev.name : "");
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, ", \"gpu_absent_reason\": ");
  len = put_json_string(buf, cap, len, dev.present ? "" : dev.absent_reason);
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0,
                          ", \"compute_capability\": \"%d.%d\", \"nvrtc\": ", dev.cc_major, dev.cc_minor);
  len = put_json_string(buf, cap, len, nvrtc);
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, ", \"kernel_class\": ");
  len = put_json_string(buf, cap, len, klass);
  len += (size_t)snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0,
                          ", \"executor\": \"%s\", \"threads\": %u}", executor, h5fz_host_threads(NULL, 0));
  free(reg);
  free(plan);
  return len < cap ? H5FZ_OK : H5FZ_ERR_ARG;
}
