import { ConfigError, loadConfig } from './config';

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('PUBLIC_URL', () => {
  it('is unset by default: the discovery metadata then names localhost', () => {
    expect(loadConfig({}).publicUrl).toBeNull();
  });

  it('takes an http or https origin, kept without a trailing slash', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://API.Example.com:8443' }).publicUrl).toBe('https://api.example.com:8443');
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).publicUrl).toBe('http://localhost:3000');
  });

  it.each([
    'api.example.com',
    'ftp://api.example.com',
    'https://api.example.com/v1',
    'https://api.example.com/?x=1',
    'https://api.example.com/#top',
    'https://user:pass@api.example.com',
    'https://',
  ])('refuses %s, naming the variable', (value) => {
    expect(problemsOf({ PUBLIC_URL: value })).toEqual([expect.stringMatching(/^PUBLIC_URL must be the origin/)]);
  });
});
