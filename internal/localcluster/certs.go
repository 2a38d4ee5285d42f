package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the generated certificates stay valid. A local
// cluster lives for hours, but a long validity keeps a cluster left running over
// a weekend usable.
const certValidity = 365 * 24 * time.Hour

// pki holds the file names of the credentials generated for one cluster, all
// under <root>/pki.
type pki struct {
	CACert, CAKey         string // the single CA that signs every certificate below
	ServingCert, ServKey  string // kube-apiserver serving pair (127.0.0.1, kubernetes.default.svc, ...)
	AdminCert, AdminKey   string // client pair of the admin user (O=system:masters)
	SAKey, SAPub          string // service-account token signing key pair (RSA)
	WebhookCert, WebhookK string // webhook-manager serving pair for 127.0.0.1
	// The real node's kubelet: its client pair (system:node:localhost in
	// system:nodes, as the Node authorizer requires) and its serving pair
	// (localhost, 127.0.0.1), which the apiserver verifies against the CA.
	KubeletCert, KubeletKey               string
	KubeletServingCert, KubeletServingKey string
	// etcd's own CA and what it signs: etcd's serving pair (also its peer
	// pair, so server and client usage) and the client pair kube-apiserver
	// and EachStored present. A CA of its own, so that no certificate of the
	// cluster CA (which kube-controller-manager also signs approved CSRs
	// with) opens etcd.
	EtcdCACert, EtcdCAKey         string
	EtcdServerCert, EtcdServerKey string
	EtcdClientCert, EtcdClientKey string
}

// pkiPaths returns the file names of the credentials under dir, as newPKI
// writes them.
func pkiPaths(dir string) *pki {
	return &pki{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub"),
		WebhookCert: filepath.Join(dir, "webhook.crt"), WebhookK: filepath.Join(dir, "webhook.key"),
		KubeletCert: filepath.Join(dir, "kubelet-client.crt"), KubeletKey: filepath.Join(dir, "kubelet-client.key"),
		KubeletServingCert: filepath.Join(dir, "kubelet.crt"), KubeletServingKey: filepath.Join(dir, "kubelet.key"),
		EtcdCACert: filepath.Join(dir, "etcd-ca.crt"), EtcdCAKey: filepath.Join(dir, "etcd-ca.key"),
		EtcdServerCert: filepath.Join(dir, "etcd.crt"), EtcdServerKey: filepath.Join(dir, "etcd.key"),
		EtcdClientCert: filepath.Join(dir, "etcd-client.crt"), EtcdClientKey: filepath.Join(dir, "etcd-client.key"),
	}
}

// newPKI generates a CA, the apiserver serving certificate, an admin client
// certificate, the service-account key pair, the webhook serving certificate,
// the kubelet's pairs and etcd's CA with its serving and client pairs into
// dir. The same CA signs everything so one ca.crt serves as
// the kubeconfig's certificate authority, the apiserver's --client-ca-file and
// the webhooks' caBundle; etcd alone trusts its own CA. It returns an error if a key cannot be generated or a
// file cannot be written.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := pkiPaths(dir)

	caCert, caKey, err := newCA("localcluster-ca", p.CACert, p.CAKey)
	if err != nil {
		return nil, err
	}
	leaf := func(certFile, keyFile string, tmpl *x509.Certificate) error {
		return newLeaf(certFile, keyFile, tmpl, caCert, caKey)
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	if err := leaf(p.ServingCert, p.ServKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// 10.0.0.1 is the first address of --service-cluster-ip-range, the
		// ClusterIP of the "kubernetes" Service.
		IPAddresses: append(loopback, net.ParseIP("10.0.0.1")),
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}); err != nil {
		return nil, err
	}
	if err := leaf(p.AdminCert, p.AdminKey, &x509.Certificate{
		// system:masters is bound to cluster-admin and bypasses RBAC.
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, err
	}
	if err := leaf(p.WebhookCert, p.WebhookK, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "vc-webhook-manager"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: loopback,
		DNSNames:    []string{"localhost"},
	}); err != nil {
		return nil, err
	}

	if err := leaf(p.KubeletCert, p.KubeletKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:" + RealNodeName, Organization: []string{"system:nodes"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, err
	}
	if err := leaf(p.KubeletServingCert, p.KubeletServingKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: RealNodeName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: loopback,
		DNSNames:    []string{RealNodeName},
	}); err != nil {
		return nil, err
	}

	etcdCACert, etcdCAKey, err := newCA("localcluster-etcd-ca", p.EtcdCACert, p.EtcdCAKey)
	if err != nil {
		return nil, err
	}
	if err := newLeaf(p.EtcdServerCert, p.EtcdServerKey, &x509.Certificate{
		Subject:  pkix.Name{CommonName: "etcd"},
		KeyUsage: x509.KeyUsageDigitalSignature,
		// Client usage too: etcd presents it as its peer certificate.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: loopback,
		DNSNames:    []string{"localhost"},
	}, etcdCACert, etcdCAKey); err != nil {
		return nil, err
	}
	if err := newLeaf(p.EtcdClientCert, p.EtcdClientKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-etcd-client"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, etcdCACert, etcdCAKey); err != nil {
		return nil, err
	}

	// Service-account tokens are signed with RS256 by default, so this key is RSA.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.SAKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey), 0o600); err != nil {
		return nil, err
	}
	if err := writePEM(p.SAPub, "PUBLIC KEY", pubDER, 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

// newCA generates a self-signed CA named cn and writes it to certFile and
// keyFile.
func newCA(cn, certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, err := signCert(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, writeCertAndKey(certFile, keyFile, cert, key)
}

// newLeaf generates a key, has ca sign tmpl for it and writes both files.
func newLeaf(certFile, keyFile string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	cert, err := signCert(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return writeCertAndKey(certFile, keyFile, cert, key)
}

// signCert signs tmpl with parent's key, filling in serial number and validity,
// and returns the parsed certificate.
func signCert(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	// Backdated by a minute so a freshly started component with a slightly
	// different clock reading does not see a not-yet-valid certificate.
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return x509.ParseCertificate(der)
}

// writeCertAndKey writes cert and key as PEM files (key mode 0600).
func writeCertAndKey(certFile, keyFile string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(certFile, "CERTIFICATE", cert.Raw, 0o644); err != nil {
		return err
	}
	return writePEM(keyFile, "EC PRIVATE KEY", keyDER, 0o600)
}

func writePEM(file, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}
