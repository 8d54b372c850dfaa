'use strict';
// Lambda@Edge (Node.js, us-east-1) on the distribution's /media/upload
// behaviour (infra/front.go): Buzz desktop's one upload call, PUT
// /media/upload of the whole file, above what a function takes. The relay
// decides everything through its own routes on the HTTP API (the
// behaviour's origin); this function only moves the request:
//   origin request:  POST /media/upload with the caller's Authorization,
//                    X-SHA-256, X-Content-Length, X-Content-Type: the relay
//                    checks the 24242 event, the key's standing, the size
//                    and quotas and answers a presigned S3 PUT bound to the
//                    size and SHA-256 (S3 refuses other bytes), or refuses;
//                    the request then goes to that URL, body untouched.
//   origin response: S3 took the bytes: PUT /media/upload with an empty
//                    body completes the upload (the relay hashes the staged
//                    object, copies it under blobs/) and its answer, the
//                    blob descriptor the app parses, replaces S3's.
// The same three steps run locally in localdev/emulator/front.go.
// Lambda@Edge has no environment variables: the constants below are
// written in by infra/front.go at synth time.
const DIRECT_MAX = __DIRECT_MAX__; // bytes a function takes (MEDIA_DIRECT_MAX_BYTES)
const HOST_HEADER = '__HOST_HEADER__'; // the viewer's Host, copied by the viewer-request function
const STASH = 'x-buzz-upload-auth'; // the caller's Authorization, kept for the response step
const API = 'x-buzz-upload-api'; // the HTTP API's host, kept for the response step

function header(req, name) {
  const v = req.headers[name];
  return v && v.length ? v[0].value : '';
}

function answer(status, body, extra) {
  const headers = {
    'content-type': [{ key: 'Content-Type', value: 'application/json' }],
    'access-control-allow-origin': [{ key: 'Access-Control-Allow-Origin', value: '*' }],
  };
  for (const [k, v] of Object.entries(extra || {})) headers[k] = [{ key: k, value: v }];
  return { status: String(status), headers, body };
}

function refuse(status, reason) {
  return answer(status, JSON.stringify({ message: reason }), { 'x-reason': reason });
}

// relay calls the relay's /media/upload on the HTTP API itself (the
// behaviour's origin, so no second pass through CloudFront), with the
// viewer's host in HOST_HEADER as the viewer-request function gives it.
async function relay(api, host, method, headers) {
  headers[HOST_HEADER] = host;
  const res = await fetch('https://' + api + '/media/upload', { method, headers });
  const extra = {};
  for (const k of ['x-reason', 'retry-after']) if (res.headers.get(k)) extra[k] = res.headers.get(k);
  return { status: res.status, text: await res.text(), extra };
}

async function stage(req) {
  if (req.method !== 'PUT') return req;
  const length = header(req, 'content-length');
  if (length === '') {
    return refuse(411, 'invalid: an upload above ' + DIRECT_MAX + ' bytes needs a Content-Length header (it goes to storage as one PUT of that many bytes; chunked transfer encoding is not taken)');
  }
  if (Number(length) <= DIRECT_MAX) return req; // through the HTTP API, as any request
  const host = header(req, HOST_HEADER) || header(req, 'host');
  const api = req.origin.custom.domainName;
  const auth = header(req, 'authorization');
  const r = await relay(api, host, 'POST', {
    authorization: auth, 'x-sha-256': header(req, 'x-sha-256'),
    'x-content-length': length, 'x-content-type': header(req, 'content-type'),
  });
  if (r.status !== 200) return answer(r.status, r.text, r.extra);
  const p = JSON.parse(r.text);
  if (!p.upload_id || !p.url) return answer(r.status, r.text, r.extra); // the key owns it already
  const u = new URL(p.url);
  req.origin = { custom: { domainName: u.hostname, port: 443, protocol: 'https', path: '', sslProtocols: ['TLSv1.2'], readTimeout: 60, keepaliveTimeout: 5, customHeaders: {} } };
  req.uri = u.pathname;
  req.querystring = u.search.replace(/^\?/, '');
  delete req.headers['authorization']; // S3 takes one authentication: the URL's
  req.headers['host'] = [{ key: 'Host', value: u.hostname }];
  for (const [k, v] of Object.entries(p.headers || {})) {
    // Host is set above; Content-Length is the viewer's (the size the URL
    // is bound to) and read-only here.
    const name = k.toLowerCase();
    if (name !== 'host' && name !== 'content-length') req.headers[name] = [{ key: k, value: String(v) }];
  }
  req.headers[STASH] = [{ key: STASH, value: auth }];
  req.headers[API] = [{ key: API, value: api }];
  req.headers[HOST_HEADER] = [{ key: HOST_HEADER, value: host }];
  return req;
}

async function complete(req, res) {
  const auth = header(req, STASH);
  if (req.method !== 'PUT' || auth === '') return res; // not a staged upload: the origin's answer
  if (!String(res.status).startsWith('2')) {
    return refuse(409, 'invalid: storage refused the body (' + res.status + '): it is not the announced size hashing to the announced X-SHA-256');
  }
  const r = await relay(header(req, API), header(req, HOST_HEADER), 'PUT', { authorization: auth, 'x-sha-256': header(req, 'x-sha-256') });
  return answer(r.status, r.text, r.extra);
}

exports.handler = async (event) => {
  const cf = event.Records[0].cf;
  try {
    if (cf.config.eventType === 'origin-request') return await stage(cf.request);
    return await complete(cf.request, cf.response);
  } catch (e) {
    return refuse(502, 'error: the upload could not be handed to storage');
  }
};
