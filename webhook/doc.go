// Package webhook is the admission logic this project adds to Volcano's webhook
// manager for Jobs that use a framework plugin (the eight of plugins/catalog:
// tensorflow, pytorch, mpi, mxnet, xgboost, dask, jax, paddle), and the bounds
// it puts before every one of Volcano's own admission paths (BoundStructure,
// BoundVolcanoAdmissions, ServeVolcano).
//
// The logic lives in plain functions: MutateJob (and MutatePatch, its JSON
// patch form) defaults a Job on CREATE, ValidateJob checks one on CREATE and
// UPDATE. MutateService and ValidateService wrap them as Volcano
// AdmissionServices with their own paths (MutatePath, ValidatePath) and webhook
// configurations (ConfigurationName). Jobs that use none of the framework plugins
// are left exactly as they are: Volcano's own job admissions handle them.
//
// Around the admissions the package also holds what the webhook manager
// serves them with: the wrappers of Volcano's job admissions
// (WithoutFrameworkPlugins, WrapVolcanoValidation; onevoice.go,
// volcanobounds.go), the server's limits (NewServer, LimitInFlight, CapBody),
// the serving certificate that follows its files (ServingTLS), and Keeper,
// which creates the two webhook configurations once every address the API
// server may call serves them, and keeps their CA bundle current.
//
// docs/webhook.md describes every rule and message.
package webhook
