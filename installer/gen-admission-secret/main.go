// Command gen-admission-secret stands in for Volcano's gen-admission-secret.sh
// in this project's vc-webhook-manager image.
//
// Volcano's Helm chart (templates/admission-init.yaml, v1.15.1 and v1.14.1 alike) runs a
// pre-install and pre-upgrade hook Job with the admission image
// (basic.admission_image_name) and the command
//
//	./gen-admission-secret.sh --service <release>-admission-service --namespace <ns> --secret volcano-admission-secret
//
// Volcano's image is Alpine with openssl and kubectl; ours is distroless (no
// shell), so the image carries this static binary under that file name, in its
// working directory /. Without it, `helm upgrade` of Volcano with our images
// would fail in that hook.
//
// It does what the script does, with one difference: a Secret that already
// holds a usable certificate (a key pair for <service>.<namespace>.svc signed
// by its ca.crt, valid for at least 30 more days) is kept, where the script
// replaces it on every upgrade. The running webhook manager keeps serving the
// certificate it loaded and the CA bundle it put into the webhook
// configurations; a replaced Secret takes effect when the manager restarts.
// Otherwise it creates a CA and a server certificate (RSA 2048, 10 years,
// DNS names <service>, <service>.<namespace>, <service>.<namespace>.svc) and
// creates the Secret (type Opaque, keys tls.key, tls.crt, ca.crt) or patches
// its data: only get, create and patch on Secrets, the verbs Volcano's chart
// grants the hook's ServiceAccount. It writes no files, so it runs with a
// read-only root filesystem as any user.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// validity of the generated CA and server certificate (the script's -days 3650).
	validity = 10 * 365 * 24 * time.Hour
	// renewBefore: a certificate that expires within this is replaced.
	renewBefore = 30 * 24 * time.Hour
	keyBits     = 2048
)

// Keys of the Secret, as Volcano's admission Deployment mounts them
// (--tls-cert-file, --tls-private-key-file, --ca-cert-file).
const (
	keyTLSKey = "tls.key"
	keyTLSCrt = "tls.crt"
	keyCACrt  = "ca.crt"
)

type options struct {
	Service, Namespace, Secret string
}

func main() {
	var o options
	var kubeconfig string
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.Service, "service", "", "service name of the webhook manager (required)")
	fs.StringVar(&o.Namespace, "namespace", "default", "namespace of the service and the Secret")
	fs.StringVar(&o.Secret, "secret", "", "name of the Secret to hold ca.crt, tls.crt and tls.key (required)")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; in-cluster configuration when empty")
	_ = fs.Parse(os.Args[1:])
	if o.Service == "" || o.Secret == "" {
		fmt.Fprintln(os.Stderr, "--service and --secret must be specified")
		os.Exit(1)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the client configuration: %v\n", err)
		os.Exit(1)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the client: %v\n", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg, err := ensure(ctx, client, o, time.Now(), rand.Reader)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(msg)
}

// ensure makes Secret o.Secret hold a usable certificate for the service and
// says what it did.
func ensure(ctx context.Context, client kubernetes.Interface, o options, now time.Time, random io.Reader) (string, error) {
	secrets := client.CoreV1().Secrets(o.Namespace)
	cur, err := secrets.Get(ctx, o.Secret, metav1.GetOptions{})
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("getting Secret %s/%s: %w", o.Namespace, o.Secret, err)
	}
	if exists {
		why := unusable(cur.Data, o, now)
		if why == "" {
			return fmt.Sprintf("Secret %s/%s holds a valid certificate for %s; kept", o.Namespace, o.Secret, serverName(o)), nil
		}
		fmt.Printf("Secret %s/%s: %s; replacing its certificate\n", o.Namespace, o.Secret, why)
	}

	data, err := generate(o, now, random)
	if err != nil {
		return "", err
	}
	if !exists {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: o.Secret, Namespace: o.Namespace},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("creating Secret %s/%s: %w", o.Namespace, o.Secret, err)
		}
		return fmt.Sprintf("Secret %s/%s created with a certificate for %s", o.Namespace, o.Secret, serverName(o)), nil
	}
	patch, err := json.Marshal(map[string]any{"data": data}) // []byte values marshal as base64
	if err != nil {
		return "", err
	}
	if _, err := secrets.Patch(ctx, o.Secret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return "", fmt.Errorf("patching Secret %s/%s: %w", o.Namespace, o.Secret, err)
	}
	return fmt.Sprintf("Secret %s/%s updated with a new certificate for %s", o.Namespace, o.Secret, serverName(o)), nil
}

// serverName is the name the API server checks the certificate against when a
// webhook configuration names the service.
func serverName(o options) string { return o.Service + "." + o.Namespace + ".svc" }

// unusable returns why data cannot serve the webhook, or "" when it can: the
// key pair must match, and the certificate must be signed by ca.crt for
// serverName, for server authentication, valid now and renewBefore from now.
func unusable(data map[string][]byte, o options, now time.Time) string {
	for _, k := range []string{keyTLSKey, keyTLSCrt, keyCACrt} {
		if len(data[k]) == 0 {
			return "no " + k
		}
	}
	pair, err := tls.X509KeyPair(data[keyTLSCrt], data[keyTLSKey])
	if err != nil {
		return fmt.Sprintf("%s and %s do not form a key pair: %v", keyTLSCrt, keyTLSKey, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Sprintf("%s: %v", keyTLSCrt, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[keyCACrt]) {
		return keyCACrt + " holds no PEM certificate"
	}
	for _, at := range []time.Time{now, now.Add(renewBefore)} {
		if _, err := leaf.Verify(x509.VerifyOptions{
			DNSName:     serverName(o),
			Roots:       roots,
			CurrentTime: at,
			KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return fmt.Sprintf("%s does not verify for %s at %s: %v", keyTLSCrt, serverName(o), at.UTC().Format(time.RFC3339), err)
		}
	}
	return ""
}

// generate returns the Secret data: a new CA and a server certificate it signs.
func generate(o options, now time.Time, random io.Reader) (map[string][]byte, error) {
	caKey, err := rsa.GenerateKey(random, keyBits)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(random),
		Subject:               pkix.Name{CommonName: serverName(o) + " CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(random, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := rsa.GenerateKey(random, keyBits)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial(random),
		Subject:               pkix.Name{CommonName: serverName(o)},
		DNSNames:              []string{o.Service, o.Service + "." + o.Namespace, serverName(o)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(random, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the server certificate: %w", err)
	}
	return map[string][]byte{
		keyCACrt:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		keyTLSCrt: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyTLSKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}, nil
}

// serial returns a random 127-bit serial number.
func serial(random io.Reader) *big.Int {
	n, err := rand.Int(random, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil || n.Sign() == 0 {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
