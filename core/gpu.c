/*
 * core/gpu: GPU facts from shared/reference/gpus.tsv (memory, compute
 * capability, bf16 support, intra-node link).  AMD's Infinity Fabric and
 * NVIDIA's NVLink are both a switched GPU-to-GPU fabric, so both default
 * to the "nvlink" interconnect class; a PCIe card defaults to "pcie".
 * Limits: pure data.
 */
#include "gpu.h"

#include <strings.h>

static const struct gpu gpus[] = {
	{ "h100-sxm", "h100", "H100 SXM5 80GB", "nvidia", 80, 90, true, true,
	  "nvlink", 989.4, 375 },
	{ "h100-pcie", NULL, "H100 PCIe 80GB", "nvidia", 80, 90, true, true,
	  "pcie", 756.5, 45 },
	{ "h100-nvl", NULL, "H100 NVL 94GB", "nvidia", 94, 90, true, true,
	  "pcie", 835.5, 45 },
	{ "h200", NULL, "H200 SXM 141GB", "nvidia", 141, 90, true, true,
	  "nvlink", 989.4, 375 },
	{ "h200-nvl", NULL, "H200 NVL 141GB", "nvidia", 141, 90, true, true,
	  "pcie", 835.5, 45 },
	{ "b200", NULL, "B200 (HGX, 1000W)", "nvidia", 180, 100, true, true,
	  "nvlink", 2250, 700 },
	{ "gb200", NULL, "GB200 (per B200 GPU)", "nvidia", 186, 100, true,
	  true, "nvlink", 2500, 700 },
	{ "a100-80gb", "a100", "A100 SXM4 80GB", "nvidia", 80, 80, true,
	  false, "nvlink", 312, 230 },
	{ "a100-40gb", NULL, "A100 SXM4 40GB", "nvidia", 40, 80, true, false,
	  "nvlink", 312, 230 },
	{ "a100-pcie-80gb", NULL, "A100 PCIe 80GB", "nvidia", 80, 80, true,
	  false, "pcie", 312, 22 },
	{ "a100-pcie-40gb", NULL, "A100 PCIe 40GB", "nvidia", 40, 80, true,
	  false, "pcie", 312, 22 },
	{ "a10g", NULL, "A10G 24GB", "nvidia", 24, 86, true, false, "pcie", 70, 22 },
	{ "l4", NULL, "L4 24GB", "nvidia", 24, 89, true, true, "pcie", 121, 22 },
	{ "l40s", NULL, "L40S 48GB", "nvidia", 48, 89, true, true, "pcie", 362, 22 },
	{ "t4", NULL, "T4 16GB", "nvidia", 16, 75, false, false, "pcie", 65, 11 },
	{ "v100-16gb", NULL, "V100 SXM2 16GB", "nvidia", 16, 70, false,
	  false, "nvlink", 125, 130 },
	{ "v100-32gb", "v100", "V100 SXM2 32GB", "nvidia", 32, 70, false,
	  false, "nvlink", 125, 130 },
	{ "rtx3090", NULL, "RTX 3090 24GB", "nvidia", 24, 86, true, false,
	  "pcie", 71, 11 },
	{ "rtx4090", NULL, "RTX 4090 24GB", "nvidia", 24, 89, true, true,
	  "pcie", 165.2, 11 },
	{ "rtx5090", NULL, "RTX 5090 32GB", "nvidia", 32, 120, true, true,
	  "pcie", 209.5, 22 },
	{ "a6000", NULL, "RTX A6000 48GB", "nvidia", 48, 86, true, false,
	  "pcie", 154.8, 22 },
	{ "rtx6000-ada", NULL, "RTX 6000 Ada 48GB", "nvidia", 48, 89, true,
	  true, "pcie", 364.2, 22 },
	{ "mi250x", NULL, "AMD MI250X 128GB", "amd", 128, 0, true, false,
	  "nvlink", 383, 150 },
	{ "mi300x", NULL, "AMD MI300X 192GB", "amd", 192, 0, true, true,
	  "nvlink", 1307.4, 300 },
	{ "mi325x", NULL, "AMD MI325X 256GB", "amd", 256, 0, true, true,
	  "nvlink", 1307.4, 300 },
	{ "gaudi2", NULL, "Intel Gaudi2 96GB", "intel", 96, 0, true, true,
	  "ethernet", 432, 50 },
	{ "gaudi3", NULL, "Intel Gaudi3 128GB", "intel", 128, 0, true, true,
	  "ethernet", 1835, 100 },
};

const struct gpu *
gpu_find(const char *id)
{
	size_t i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
		if (strcasecmp(gpus[i].id, id) == 0 || (gpus[i].alias != NULL &&
		    strcasecmp(gpus[i].alias, id) == 0))
			return &gpus[i];
	return NULL;
}

const struct gpu *
gpu_all(size_t *n)
{
	*n = sizeof(gpus) / sizeof(gpus[0]);
	return gpus;
}
