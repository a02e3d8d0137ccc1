// The dashboard's progressive enhancement; every page works without it.
// - A region marked data-refresh (a batch still processing) reloads itself from the server every
//   two seconds until the server sends it without the mark; the live region announces the change.
// - A form's error summary takes the focus when the page opens, so a screen reader reads it first.
document.addEventListener('DOMContentLoaded', () => {
  const summary = document.getElementById('error-summary');
  if (summary) summary.focus();
  const region = document.querySelector('[data-refresh]');
  if (!region) return;
  const tick = async () => {
    try {
      const response = await fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), 'text/html');
      const fresh = doc.getElementById(region.id);
      if (!fresh) return;
      region.innerHTML = fresh.innerHTML;
      if (!fresh.hasAttribute('data-refresh')) {
        region.removeAttribute('data-refresh');
        return;
      }
    } catch {
      // The next tick tries again.
    }
    setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
});
